"""pykern/codegen/lowering"""
