"""polylab.storage"""
