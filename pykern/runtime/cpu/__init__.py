"""pykern/runtime/cpu"""
