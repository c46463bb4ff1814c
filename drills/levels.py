"""How hard a drill or an interview question is. Apart from the models, so the command line lists the levels
without loading the question bank."""

from __future__ import annotations

from typing import Literal

Difficulty = Literal["easy", "medium", "hard"]
DIFFICULTIES: tuple[Difficulty, ...] = ("easy", "medium", "hard")
