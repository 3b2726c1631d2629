"""strict-agent-loop core: durable loop state, stop checks and progress reports.

No MCP imports here; the MCP server and the scripts are thin adapters over
:class:`Workspace`.
"""

__version__ = "0.1.0"

from .errors import LoopError, StateDamaged, TaskNotFound  # noqa: E402
from .workspace import Workspace  # noqa: E402

__all__ = ["Workspace", "LoopError", "StateDamaged", "TaskNotFound", "__version__"]
