"""The game-record archive: queries of finished games (`service`, `store`, the counts'
estimates `counts_store`), who may see which game (`visibility`), PDN export (`records`) and
import (`importer`). docs/rest.md (the archive).

May import: accounts, tables.
"""
