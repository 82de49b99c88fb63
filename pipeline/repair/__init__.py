"""Repair: route a typed verification failure to the artifact at fault, bound the attempts."""
