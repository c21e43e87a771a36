"""polylab.frontend"""
