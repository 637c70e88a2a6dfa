"""The monitoring room: what the charm tells the fleet's monitoring about
this host's vGPUs.

The charm's hooks read the host and write the facts (a JSON document,
FACTS_PATH in exporter.py); the exporter serves them to Prometheus at
every scrape, and cos_agent.py installs it and publishes its scrape job,
alert rules and dashboard to grafana-agent over the cos-agent relation.
"""
