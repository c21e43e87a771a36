"""polylab.toolchain"""
