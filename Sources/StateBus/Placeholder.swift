public enum StateBusModule {}
