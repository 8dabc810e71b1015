#!/usr/bin/env python3
"""Run Spark SQL queries against the test environment's metastore and HDFS.

Two modes:

  spark_sql.py --out RESULT.json  < {"queries": ["SELECT ...", ...]}
  spark_sql.py --serve --reply-fd 3    (one request per stdin line)

RESULT.json (or each reply line on the reply fd) is
{"results": [[row, ...], ...]} with one list per query and each row a JSON
object (column -> value; non-JSON values are rendered with str()). On a
failing query it is {"error": "...", "query_index": i}; --out then exits 1.
Spark logs go to stderr.

--serve is what internal/itest uses: a SparkSession costs ~30 CPU-seconds to
start (a JVM, Spark and the Hive client), more than the queries of a test, so
one session answers a test binary's requests one after another until stdin
closes. Before each request it forgets what it cached (tables' relations and
file listings, cached data, the current database), so a request sees the
metastore and HDFS as a new session would.
"""
import argparse
import json
import os
import shutil
import sys
import tempfile


def session():
    from pyspark.sql import SparkSession

    b = (
        SparkSession.builder.master("local[1]")
        .appName("hdfs-sink-itest")
        .config("spark.hadoop.hive.metastore.uris", os.environ.get("HDFS_SINK_TESTENV_METASTORE", "thrift://127.0.0.1:9083"))
        .config("spark.hadoop.fs.defaultFS", os.environ.get("HDFS_SINK_TESTENV_HDFS_URI", "hdfs://127.0.0.1:8020"))
        .config("spark.sql.warehouse.dir", os.environ.get("HDFS_SINK_TESTENV_HDFS_URI", "hdfs://127.0.0.1:8020") + "/warehouse")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "1")
        .config("spark.driver.memory", os.environ.get("HDFS_SINK_TESTENV_SPARK_DRIVER_MEMORY", "1g"))
        .enableHiveSupport()
    )
    # Extra settings as a JSON object (the Kerberos profile's client side).
    for k, v in json.loads(os.environ.get("HDFS_SINK_TESTENV_SPARK_CONF") or "{}").items():
        b = b.config(k, v)
    jar = os.environ.get("HDFS_SINK_TESTENV_SPARK_AVRO_JAR")
    if jar:
        b = b.config("spark.jars", jar)
    s = b.getOrCreate()
    s.sparkContext.setLogLevel("WARN")
    return s


def run(spark, queries):
    """Runs queries in order; the first failing one ends the request."""
    results = []
    for i, q in enumerate(queries):
        try:
            rows = spark.sql(q).collect()
        except Exception as e:  # report which query failed, then stop
            return {"error": f"{type(e).__name__}: {e}", "query_index": i}
        results.append([r.asDict(recursive=True) for r in rows])
    return {"results": results}


def forget(spark):
    """Drops what a session remembers between requests: cached data, the
    relations (with their file listings) of tables it has read, the current
    database."""
    spark.catalog.clearCache()
    spark._jsparkSession.sessionState().catalog().invalidateAllCachedTables()
    spark.catalog.setCurrentDatabase("default")


def serve(reply):
    spark = None
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            queries = json.loads(line)["queries"]
            if spark is None:
                spark = session()
            else:
                forget(spark)
            reply.write(json.dumps(run(spark, queries), default=str) + "\n")
            reply.flush()
    finally:
        if spark is not None:
            spark.stop()
    return 0


def once(out_file):
    queries = json.load(sys.stdin)["queries"]
    spark = session()
    out = {"error": "no query ran", "query_index": -1}
    try:
        out = run(spark, queries)
    finally:
        with open(out_file, "w") as f:
            json.dump(out, f, default=str)
        spark.stop()
    return 1 if "error" in out else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--serve", action="store_true")
    ap.add_argument("--reply-fd", type=int, default=3)
    args = ap.parse_args()
    if args.serve == bool(args.out):
        ap.error("give exactly one of --out FILE and --serve")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("HADOOP_USER_NAME", "root")
    out_file = os.path.abspath(args.out) if args.out else None
    # Spark may drop derby.log or spark-warehouse in its working directory.
    work = tempfile.mkdtemp(prefix="itest-spark-")
    os.chdir(work)
    try:
        if args.serve:
            with os.fdopen(args.reply_fd, "w") as reply:
                return serve(reply)
        return once(out_file)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
