"""Calling hooks: the plain dispatcher (:mod:`.hooks`, nothing paid for hooks nobody wrote) and the one that times
every action under Lightning's names when a profiler records (:mod:`.profiling`)."""
