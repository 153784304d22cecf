"""The data for measuring per-message tool selection: which of ~150 tools (built-ins,
two test plugins, six real MCP servers) a chat message should be offered to the model.

`catalog` reads it: `corpus.yaml` (labelled messages in English and Chinese) and
`mcp_tools.json` (the servers' own `tools/list`, written by `capture_mcp_tools`).
"""
