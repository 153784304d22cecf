"""Plugin modules the tests load by name, as a config would (`tests.plugin_fixtures.dice`)."""
