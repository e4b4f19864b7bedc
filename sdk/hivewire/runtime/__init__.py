"""The listener runtime: lanes (one worker per listener), commit tracking, and the polling loop."""
