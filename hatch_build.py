"""Hatchling build hook: a built wheel carries the skill's repo-top files inside the package.

``skill-files`` in pyproject.toml ([tool.hatch.build.targets.wheel.hooks.custom]) maps each repo-top
path (SKILL.md, references/, scripts/) to its place in the wheel (strict_loop/skill/...). Only standard
wheels get them: an editable install reads the repo's own files (strict_loop/resources.py), so copies
in site-packages would only go stale.
"""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class SkillFilesHook(BuildHookInterface):
    PLUGIN_NAME = "skill-files"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "standard":
            build_data["force_include"].update(self.config["skill-files"])
