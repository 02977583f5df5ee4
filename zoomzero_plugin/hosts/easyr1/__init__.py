"""The EasyR1 host: plugin loading, activation in every Ray process, patches, and the `easyr1` CLI."""
