//! Deterministic corpus generator (stub).
