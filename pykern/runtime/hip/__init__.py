"""pykern/runtime/hip"""
