"""What a person sees: the progress bar or plain lines (:mod:`.progress`), and the start-up line, model summary
and results table (:mod:`.summary`). Printed on the global-zero process only, on stderr."""
