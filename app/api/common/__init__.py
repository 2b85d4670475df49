"""What the REST routes share: their dependencies (`deps`: the session, the user, the
administrator), the limits on their inputs (`params`), the archive's reader (`viewer`), the
one mapping of refusals to answers (`errors`) and the lichess-shaped reading of bodies
(`lichess`)."""
