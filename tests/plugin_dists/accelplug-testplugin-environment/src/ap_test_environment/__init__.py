"""Test plugin: a cluster environment added through register_cluster_environments."""
