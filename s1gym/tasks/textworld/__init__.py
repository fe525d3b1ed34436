"""The TextWorld family: s1/TextWorld-v0, games made by TextWorld's own generator (``tw-make``'s four
challenges), played on jericho's interpreter with TextWorld's state tracker, forked by copying the tracker
and the interpreter's state. Inside this package ``import textworld`` is the TextWorld library (absolute
imports)."""
