"""pykern/core"""
