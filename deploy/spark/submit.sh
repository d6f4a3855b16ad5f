#!/usr/bin/env bash
# Submit offsetguard's history job to a Spark cluster with spark-submit (PySpark's own, or any Spark 4.2).
#
#   deploy/spark/submit.sh spark://master:7077 --source archive --archive /data/archive --out /data/out
#   deploy/spark/submit.sh k8s://https://kube-api:6443 --source kafka --bootstrap kafka:9092 --out s3a://...
#
# Builds build/offsetguard.zip (the pipeline, collectors and alerts packages) for --py-files and passes
# the Kafka data source jars of deploy/spark/lib (resolved by `mvn -f deploy/spark/pom.xml
# dependency:copy-dependencies`). Extra spark-submit options go in SPARK_SUBMIT_OPTS_EXTRA, e.g.
#   SPARK_SUBMIT_OPTS_EXTRA="--conf spark.executor.instances=4 --conf spark.executor.memory=4g"
# On Kubernetes the image must carry Python 3.11 with pyarrow, matplotlib and pandas (see
# deploy/spark/k8s/Dockerfile); the zip and jars are uploaded through spark.kubernetes.file.upload.path.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
master="${1:?usage: submit.sh MASTER JOB-ARGS...}"
shift

spark_submit="${SPARK_SUBMIT:-}"
if [[ -z "$spark_submit" ]]; then
  spark_home="$(python3 -c 'import pyspark, os; print(os.path.dirname(pyspark.__file__))')"
  spark_submit="$spark_home/bin/spark-submit"
fi

if ! ls "$here"/lib/spark-sql-kafka-0-10_*.jar >/dev/null 2>&1; then
  mvn -q -B -f "$here/pom.xml" dependency:copy-dependencies
fi
jars="$(ls "$here"/lib/*.jar | paste -sd, -)"

mkdir -p "$repo/build"
zip_file="$repo/build/offsetguard.zip"
(cd "$repo" && rm -f "$zip_file" && python3 -m zipfile -c "$zip_file" pipeline collectors alerts >/dev/null)

# shellcheck disable=SC2086
exec "$spark_submit" \
  --master "$master" \
  --name offsetguard-history \
  --jars "$jars" \
  --py-files "$zip_file" \
  --conf spark.sql.streaming.kafka.useDeprecatedOffsetFetching=true \
  --conf spark.sql.session.timeZone=UTC \
  ${SPARK_SUBMIT_OPTS_EXTRA:-} \
  "$here/history.py" "$@"
