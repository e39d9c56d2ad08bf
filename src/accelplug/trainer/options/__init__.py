"""The Trainer's options: each declared once (:mod:`.entries`), checked (:mod:`.checks`), filled from saved
defaults (:mod:`.defaults`); and the checks of what a Trainer method was given (:mod:`.arguments`)."""
