"""The user interfaces: the ``s1`` command line (:mod:`.cli`), playing by hand (:mod:`.play`) and the
System One server (:mod:`.serve`)."""
