#!/usr/bin/env python3
"""Run Spark SQL queries against the test environment's metastore and HDFS.

Used by internal/itest.SparkSQL. One SparkSession per call (it costs ~10 s to
start), many queries per call.

  spark_sql.py --out RESULT.json  < {"queries": ["SELECT ...", ...]}

RESULT.json is {"results": [[row, ...], ...]} with one list per query and each
row a JSON object (column -> value; non-JSON values are rendered with str()).
On a failing query it is {"error": "...", "query_index": i} and the exit
status is 1. Spark logs go to stderr; nothing else is printed on stdout.
"""
import argparse
import json
import os
import sys


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    queries = json.load(sys.stdin)["queries"]
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("HADOOP_USER_NAME", "root")
    spark = session()
    results = []
    status = 0
    out = {"results": results}
    try:
        for i, q in enumerate(queries):
            try:
                rows = spark.sql(q).collect()
            except Exception as e:  # report which query failed, then stop
                out = {"error": f"{type(e).__name__}: {e}", "query_index": i}
                status = 1
                break
            results.append([r.asDict(recursive=True) for r in rows])
    finally:
        with open(args.out, "w") as f:
            json.dump(out, f, default=str)
        spark.stop()
    return status


if __name__ == "__main__":
    sys.exit(main())
