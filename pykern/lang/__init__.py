"""pykern/lang"""
