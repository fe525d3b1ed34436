"""The generic floor of Local's fitted models, below every family: the shape they share
(:mod:`.fitted`), the recipe that fits them (:mod:`.fitting`), models read by one reader function
(:mod:`.token_model`), the word features Local and the families share (:mod:`.words`) and the packaged
sentence embedder (:mod:`.minilm`). A family's model imports from here; nothing here imports a family."""
