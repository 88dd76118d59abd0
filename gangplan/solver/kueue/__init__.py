"""Kueue as Kueue runs it (issue 42): admission cycles, flavor assignment with quota, TAS placement."""
