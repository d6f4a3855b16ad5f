"""The one door to Kafka: every module that imports kafka-python or aiokafka lives in this package.

* :mod:`.seam` — :class:`~collectors.kafka.seam.KafkaPythonSeam`, the real
  :class:`collectors.seam.KafkaSeam` (one Kafka round trip per method), over kafka-python's admin client;
  :mod:`.requests` and :mod:`.group_requests` build its requests, :mod:`.protocol` the messages
  kafka-python does not ship (their JSON schemas in ``schemas/``).
* :mod:`.fast_io`, :mod:`.fast_wire`, :mod:`.fast_metadata`, :mod:`.fast_offsets`, :mod:`.fast_cache`,
  :mod:`.fast_fallback` — the large answers read undecoded and decoded by hand, kafka-python's decoder as
  the fallback.
* :mod:`.tail` — the live tail of ``__consumer_offsets`` on aiokafka; :mod:`.raw_reader` and
  :mod:`.offsets_topic` — raw and bounded reads of it.
* :mod:`.errors` and :mod:`.tail_errors` — kafka-python's and aiokafka's exceptions translated into
  :mod:`collectors.errors` at the seam.
* :mod:`.privates` — the only module that touches kafka-python's and aiokafka's private attributes.
* For the tools beside the monitor, which have no Kafka client of their own: :mod:`.admin` — the
  sandbox's readiness probes and ACL set-up; :mod:`.actions` and :mod:`.member` — the drills' topics,
  records, committed offsets and real group members.

Beware the name: ``import kafka`` inside this package is still kafka-python (absolute imports), while
this package is always ``collectors.kafka``.
"""
