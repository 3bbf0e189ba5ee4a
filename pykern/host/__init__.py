"""pykern/host"""
