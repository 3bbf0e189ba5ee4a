"""pykern/codegen/cpu"""
