"""Operations: what lets someone outside run rpay and be told when it goes wrong.
Health and readiness probes (``health``), Prometheus metrics (``metrics``), JSON logs
with request and run ids (``logs``), error reporting to Sentry with card data scrubbed
(``sentry``), and the batches' dead-man's switch (``pings``)."""
