"""The demo's parts for the capabilities added beside the original portal (prices,
usage, revenue history): each module's ``seed(today)`` is called by ``seed_demo`` after
the demo accounts exist, and returns the lines it prints."""
