"""Game analysis: every position of a game searched by the engine, each move's cost labelled
(inaccuracy, mistake, blunder) from the fall of its mover's winning chances, and each player's
accuracy (``game``); evaluations as winning chances and win/draw/loss (``chances``).

Pure like ``app.engine``, which it drives: imports only ``app.rules`` and ``app.engine``.
"""

from app.analysis.chances import Eval
from app.analysis.game import DEFAULT_NODES, GameAnalysis, PlyReport, analyse, limits

__all__ = ["DEFAULT_NODES", "Eval", "GameAnalysis", "PlyReport", "analyse", "limits"]
