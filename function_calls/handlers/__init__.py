"""Built-in handlers; importing this package registers them in the default registry."""

from function_calls.handlers import help as help  # registers the tool
