"""polylab.notebook"""
