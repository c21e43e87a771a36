"""polylab.codegen"""
