"""Kafka message JSON schemas (copied from apache/kafka 4.1.2 ``clients/src/main/resources/common/message``)
for APIs kafka-python 3.0 does not ship, loaded by :mod:`collectors.kafka.protocol`."""
