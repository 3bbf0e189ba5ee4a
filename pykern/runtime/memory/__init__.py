"""pykern/runtime/memory"""
