"""pykern/jit"""
