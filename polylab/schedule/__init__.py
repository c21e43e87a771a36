"""polylab.schedule"""
