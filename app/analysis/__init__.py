"""Game analysis: every position of a game searched by the engine, each move's cost labelled
(inaccuracy, mistake, blunder) from the fall of its mover's winning chances, and each player's
accuracy (``game``); evaluations as winning chances and win/draw/loss (``chances``).

Pure like ``app.engine``, which it drives: imports only ``app.rules`` and ``app.engine``.

The subsystem's server code stands beside the pure modules (`chances`, `game` and this
package): the analysis of a finished game stored and served (`service`, `store`), its worker
processes (`runner`), the analysis board's searches (`board`).

May import: live, accounts, archive, computer.
"""

from app.analysis.chances import Eval
from app.analysis.game import DEFAULT_NODES, GameAnalysis, PlyReport, analyse, limits

__all__ = ["DEFAULT_NODES", "Eval", "GameAnalysis", "PlyReport", "analyse", "limits"]
