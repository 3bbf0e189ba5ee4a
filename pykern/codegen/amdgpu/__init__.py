"""pykern/codegen/amdgpu"""
