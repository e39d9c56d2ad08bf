"""The loops: fit (:mod:`.fit`), evaluation and prediction (:mod:`.evaluation`), one batch's optimisation
(:mod:`.optimization`), and the pieces they share."""
