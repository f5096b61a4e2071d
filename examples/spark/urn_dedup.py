#!/usr/bin/env python3
"""Unique URNs of inputs too big for one machine: urnscan under Apache Spark.

``urnscan scan --unique --format jsonl -`` is a pure stdin -> stdout filter, so
Spark can run it unchanged on every partition of a dump, and one shuffle by
equivalence key does the global deduplication. The result has exactly the
records of ``urnscan scan --unique --format jsonl PATH...`` on the same files,
sorted by key: ``{"key", "urn", "count", "nid", "path", "offset"}`` with the
total count and the first-seen form, path and byte offset (first in input
order: paths in the order given, directory entries sorted by name, then
offset). tests/spark.rs checks that equality.

How it works
------------
1. The driver expands the inputs as urnscan does (directories walked
   recursively in name order) through Hadoop's FileSystem API, so
   ``hdfs://``, ``s3a://`` and local paths all work.
2. Each file is read as lines that keep their exact bytes
   (``TextInputFormat`` with the record delimiter ``\\n``, so a ``\\r`` of a
   CRLF line is kept), in splits read in parallel, each line with its byte
   offset in the file. Scanning lines gives the same URNs as scanning whole
   files: a URN never contains a line break, and every rule that decides
   where a URN starts or ends looks only at bytes of the same line (the byte
   before ``urn:``, and a ``%HH`` triplet right before it, for the left
   boundary; the byte before ``urn:`` for the apostrophe rule; the URN's own
   bytes for trimming). A line break is not a URI-scheme character, so a
   line start is a left boundary, as the start of a file is.
3. Each partition's lines are piped through ``urnscan scan --unique --format
   jsonl -`` (urnscan itself is the map-side combiner: one record per key
   and partition instead of one per occurrence). The partition keeps, for
   the few places where it matters, how stream offsets map to file offsets,
   so every record gets the file and the byte offset of its first
   occurrence.
4. ``reduceByKey`` adds the counts and keeps the earliest (file, offset) with
   its spelling; ``sortByKey`` orders by key (keys are ASCII, so this is
   urnscan's byte order); the records are written as JSON lines with
   ``saveAsTextFile``: read ``OUTPUT/part-*`` in name order.

This is what ``RDD.pipe`` does (start the command, feed the partition on
stdin from a thread, read its stdout), done by hand for three reasons:
``RDD.pipe`` sends only the lines, so the file offsets would be lost; its
command is fixed on the driver, while a binary shipped with ``--files`` has a
per-executor path (``SparkFiles.get``); and it ignores the exit status unless
asked, while urnscan's status 2 (an error) must fail the task. For a quick
look at every occurrence, with urnscan at the same path on every node,
``sc.textFile("logs/*.log").pipe("/usr/local/bin/urnscan scan --format jsonl -")``
works as is (offsets relative to each partition; no ``checkCode``, since
status 1 only means that a partition holds no URN).

Bytes that are not UTF-8
------------------------
Spark hands text to Python decoded, with each invalid UTF-8 sequence replaced
by U+FFFD. URNs are ASCII and every non-ASCII byte is treated alike by the
boundary rules, so keys, counts, spellings, first-seen order and paths stay
exact; only the offset of a first occurrence that follows such a sequence on
the same line is off. ``--whole-files`` reads every file as raw bytes
(``binaryFiles``) and is exact for any bytes, at the price of one task per
file holding the whole file in memory (under 2 GiB each): use it for many
files of modest size, the default for a few huge ones.

Running it
----------
Locally (``local[2]`` unless ``--master`` or spark-submit says otherwise)::

    pip install pyspark          # Java 17 or newer must be installed
    cargo build --release
    python3 examples/spark/urn_dedup.py --urnscan target/release/urnscan \\
        --output /tmp/urns datasets/corpus
    cat /tmp/urns/part-*

On a cluster, with the Linux binary built for the nodes' architecture::

    spark-submit --master yarn examples/spark/urn_dedup.py \\
        --urnscan ./urnscan --output hdfs:///out/urns 'hdfs:///dumps/2026-*'

The binary given by ``--urnscan`` is shipped to every executor
(``SparkContext.addFile``) and run from there; with ``--no-ship`` the same
path must exist on every node (for example after installing urnscan on each
with ``cargo install --path .``). Hidden files (names starting with ``.`` or
``_``) are skipped in directories, as Hadoop input formats skip them: a
difference from urnscan, which scans them unless ``--respect-ignore``.
"""

import argparse
import bisect
import json
import os
import shutil
import subprocess
import sys
import threading

SCAN = ["scan", "--unique", "--format", "jsonl", "-"]
TEXT_INPUT = "org.apache.hadoop.mapreduce.lib.input.TextInputFormat"
GLOB_CHARS = set("*?[]{}\\")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("inputs", nargs="+", help="files, directories or Hadoop globs (in input order)")
    p.add_argument("--output", required=True, help="output directory (must not exist): JSON lines in part-* files")
    p.add_argument("--urnscan", default=shutil.which("urnscan") or "urnscan", help="urnscan binary (on the driver)")
    p.add_argument("--no-ship", action="store_true", help="run --urnscan as is on every node instead of shipping it")
    p.add_argument("--master", help="Spark master (default: spark-submit's, else local[2])")
    p.add_argument("--whole-files", action="store_true", help="read files as raw bytes, one task per file")
    p.add_argument("--split-size", type=int, help="largest input split in bytes (default: Hadoop's block size)")
    p.add_argument("--partitions", type=int, help="partitions of the shuffle and output files (default: Spark's)")
    p.add_argument("--rfc2141", action="store_true", help="judge by RFC 2141, as urnscan --rfc2141")
    return p.parse_args(argv)


# ---- driver: inputs in urnscan's order -------------------------------------


def expand_inputs(sc, inputs):
    """Every file to read, in urnscan's input order: (name to report, Hadoop path).
    An argument that names no file but has glob characters is a Hadoop glob,
    its matches taken in byte order of their paths."""
    jvm = sc._jvm
    conf = sc._jsc.hadoopConfiguration()
    files = []
    for arg in inputs:
        path = jvm.org.apache.hadoop.fs.Path(arg)
        fs = path.getFileSystem(conf)
        if fs.exists(path):
            walk(fs, fs.getFileStatus(path), arg, files)
        elif GLOB_CHARS & set(arg):
            matches = fs.globStatus(path) or []
            if not matches:
                sys.exit(f"urn_dedup: {arg}: no file matches")
            for status in sorted(matches, key=lambda s: name_order(str(s.getPath()))):
                walk(fs, status, str(status.getPath()), files)
        else:
            sys.exit(f"urn_dedup: {arg}: no such file or directory")
    return files


def walk(fs, status, name, files):
    """Depth first, entries sorted by name (byte order), as urnscan walks."""
    if not status.isDirectory():
        files.append((name, str(status.getPath())))
        return
    for child in sorted(fs.listStatus(status.getPath()), key=lambda c: name_order(c.getPath().getName())):
        child_name = name.rstrip("/") + "/" + child.getPath().getName()
        if child.getPath().getName().startswith((".", "_")):
            print(f"urn_dedup: {child_name}: skipped (Hadoop input formats do not read hidden files)", file=sys.stderr)
        else:
            walk(fs, child, child_name, files)


def name_order(name):
    return name.encode("utf-8", "surrogateescape")


def hadoop_literal(path):
    """A path Hadoop's input formats take literally (they glob and split on commas)."""
    if "," in path:
        sys.exit(f"urn_dedup: {path}: Hadoop input formats cannot read a path with a comma")
    return "".join("\\" + c if c in GLOB_CHARS else c for c in path)


# ---- executors: one urnscan per partition -----------------------------------


def run_urnscan(command, chunks):
    """Feeds `chunks` (bytes) to urnscan's stdin from a thread, as RDD.pipe does,
    and returns its JSON records; status 1 (nothing found) is fine, 2 is not."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    writer_error = []

    def feed():
        try:
            for chunk in chunks:
                proc.stdin.write(chunk)
        except BaseException as e:  # reported below: the task must fail, not truncate its input
            writer_error.append(e)
        finally:
            proc.stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    stderr = []
    drain = threading.Thread(target=lambda: stderr.append(proc.stderr.read()), daemon=True)
    drain.start()
    records = [json.loads(line) for line in proc.stdout]
    writer.join()
    drain.join()
    status = proc.wait()
    if status not in (0, 1):
        raise RuntimeError(f"{command} exited with {status}: {b''.join(stderr).decode(errors='replace')}")
    if writer_error:
        raise RuntimeError(f"feeding urnscan failed: {writer_error[0]!r}")
    return records


class OffsetMap:
    """Stream offsets of piped lines -> file offsets. A line's bytes on the pipe
    are its bytes in the file (plus the final `\\n` of a last line that had
    none), except that invalid UTF-8 became U+FFFD; so the difference between
    the two offsets changes only at the start of a line after such a line.
    Only those anchors are kept: one per partition for UTF-8 text."""

    def __init__(self):
        self.stream_starts = []
        self.shifts = []
        self.written = 0

    def lines(self, records):
        """The (file offset, text) records as bytes to pipe, noting anchors."""
        for file_offset, text in records:
            shift = file_offset - self.written
            if not self.shifts or self.shifts[-1] != shift:
                self.stream_starts.append(self.written)
                self.shifts.append(shift)
            data = text.encode("utf-8") + b"\n"
            self.written += len(data)
            yield data

    def file_offset(self, stream_offset):
        i = bisect.bisect_right(self.stream_starts, stream_offset) - 1
        return stream_offset + self.shifts[i]


def keyed(file_index, offset_of, record):
    """(key, (count, file index, file offset, first-seen urn, nid)): the value
    `earliest` combines."""
    first = (file_index, offset_of(record["offset"]))
    return record["key"], (record["count"],) + first + (record["urn"], record["nid"])


def earliest(a, b):
    """Counts add up; the first-seen form is the one at the smaller (file, offset)."""
    first = a if a[1:3] <= b[1:3] else b
    return (a[0] + b[0],) + first[1:]


def to_json(paths, item):
    key, (count, file_index, offset, urn, nid) = item
    record = {"key": key, "urn": urn, "count": count, "nid": nid, "path": paths[file_index], "offset": offset}
    return json.dumps(record, separators=(",", ":"), ensure_ascii=False)


# ---- the job -----------------------------------------------------------------


def spark_context(args):
    from pyspark import SparkConf, SparkContext

    conf = SparkConf().setAppName("urn_dedup").set("spark.ui.showConsoleProgress", "false")
    if args.master:
        conf.setMaster(args.master)
    elif not conf.contains("spark.master"):
        conf.setMaster("local[2]")
    if conf.get("spark.master").startswith("local"):
        # Local workers must run this interpreter (the one that has pyspark).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sc = SparkContext(conf=conf)
    sc.setLogLevel("WARN")
    return sc


def scan_command(args, sc):
    binary = args.urnscan
    if not args.no_ship:
        resolved = shutil.which(binary) or binary
        if not os.access(resolved, os.X_OK):
            sys.exit(f"urn_dedup: {binary}: not an executable urnscan binary (use --urnscan PATH)")
        sc.addFile(os.path.abspath(resolved))
        binary = os.path.basename(resolved)
    return binary, SCAN + (["--rfc2141"] if args.rfc2141 else []), not args.no_ship


def file_rdd(sc, args, command, file_index, hadoop_path):
    """One file's unique-URN records, keyed, read as lines or whole."""
    binary, scan_args, shipped = command

    def argv():
        from pyspark import SparkFiles

        return [SparkFiles.get(binary) if shipped else binary] + scan_args

    if args.whole_files:
        data = sc.binaryFiles(hadoop_literal(hadoop_path)).values()
        return data.flatMap(lambda b: [keyed(file_index, int, r) for r in run_urnscan(argv(), [b])])

    conf = {"textinputformat.record.delimiter": "\n"}
    if args.split_size:
        conf["mapreduce.input.fileinputformat.split.maxsize"] = str(args.split_size)
    lines = sc.newAPIHadoopFile(
        hadoop_literal(hadoop_path), TEXT_INPUT, "org.apache.hadoop.io.LongWritable", "org.apache.hadoop.io.Text",
        conf=conf,
    )

    def partition(records):
        offsets = OffsetMap()
        found = run_urnscan(argv(), offsets.lines(records))
        return [keyed(file_index, offsets.file_offset, r) for r in found]

    return lines.mapPartitions(partition)


def main(argv=None):
    args = parse_args(argv)
    sc = spark_context(args)
    try:
        files = expand_inputs(sc, args.inputs)
        command = scan_command(args, sc)
        parts = [file_rdd(sc, args, command, i, path) for i, (_, path) in enumerate(files)]
        paths = [name for name, _ in files]
        records = sc.union(parts) if parts else sc.emptyRDD()
        unique = records.reduceByKey(earliest, args.partitions).sortByKey(numPartitions=args.partitions)
        unique.map(lambda item: to_json(paths, item)).saveAsTextFile(args.output)
    finally:
        sc.stop()


if __name__ == "__main__":
    main()
