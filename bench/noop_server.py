"""A one-tool MCP server on the same SDK, the baseline for bench/mcp_latency.py."""

from mcp.server.mcpserver import MCPServer

server = MCPServer(name="noop")


@server.tool()
def noop() -> str:
    """Do nothing."""
    return "ok"


if __name__ == "__main__":
    server.run("stdio")
