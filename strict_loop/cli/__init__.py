"""The ``strict-loop`` command: parsers generated from the request models, the person-only commands (demo,
alerts, schemas) and the catalogue of file formats.

It may import everything.
"""

__all__ = ["alertview", "app", "demo", "flags", "schemas"]
