"""polylab.analysis"""
