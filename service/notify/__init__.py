"""Notifications of alerts to webhooks and Alertmanagers, from a queue persisted in the store, and the
silences that hold them back.

* **Queue and at-least-once.** ``alert_transitions`` is the outbox: the detection loop (and the ack
  endpoint) write each transition in the same transaction as the alert. The :class:`Dispatcher` fans
  transitions out into ``notifications`` rows in one transaction that also advances ``notify_progress``
  (:mod:`store.notifications`), so a crash anywhere loses nothing and a restart resumes where the
  last committed fan-out stopped. The detection listener only wakes the dispatcher. A row is marked
  delivered after a 2xx, so a crash between the two sends it again: receivers get every notification at
  least once and may drop repeats by ``notification_id``.
* **Retries.** Exponential backoff with jitter per row (:mod:`service.notify.backoff`), rows of one
  receiver and alert strictly in order, given up after ``retry.give_up_after_seconds`` (abandoned).
* **Silences** are checked when a transition is fanned out (:mod:`service.notify.fanout`): a silenced
  alert's row is recorded as ``silenced`` and never sent. A firing alert whose silence ended (or was
  deleted) is notified then by the catch-up pass; ``resolved`` always reaches receivers that were told
  the alert was firing.
"""
