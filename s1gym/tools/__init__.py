"""Commands run offline, above every layer: the harness the token models' fitting scripts share
(:mod:`.token_fit`: collect labelled states, fit, play the protocol's arms with Local and Search). Nothing
in the package imports this folder; the families' ``fit`` modules and bench/ do."""
